"""POST /api/v1/follow-bounces/: a mail system reports an address whose mail bounced.

For a token of a user with the "record bounces" permission (no group has it by default).
The answer is the same whether or not anyone follows with that address.
"""

from drf_spectacular.utils import extend_schema, inline_serializer
from rest_framework import serializers, status
from rest_framework.permissions import BasePermission
from rest_framework.response import Response
from rest_framework.viewsets import ViewSet

from summaries.following import signup
from summaries.models.access import is_staff


class MayRecordBounces(BasePermission):
    message = "You do not have permission to record bounces."

    def has_permission(self, request, view):
        return is_staff(request.user) and request.user.has_perm("summaries.record_bounces")


class BounceInput(serializers.Serializer):
    email = serializers.EmailField(max_length=254)


class BounceViewSet(ViewSet):
    permission_classes = [MayRecordBounces]

    @extend_schema(
        request=BounceInput,
        responses={202: inline_serializer("BounceRecorded", {"email": serializers.EmailField()})},
        summary="Record a bounced address: its follows end",
    )
    def create(self, request):
        data = BounceInput(data=request.data)
        data.is_valid(raise_exception=True)
        signup.record_bounce(email=data.validated_data["email"])
        return Response({"email": data.validated_data["email"]}, status=status.HTTP_202_ACCEPTED)
