"""Citations' part and confirmer columns indexed only where set: every query by them names
a value (deleting a part or a user), and a citation has one part and no confirmer at first,
so a save of thousands of citations writes one entry per row in these indexes, not four."""

import django.db.models.deletion
from django.conf import settings
from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("summaries", "0033_correction_protect"),
        migrations.swappable_dependency(settings.AUTH_USER_MODEL),
    ]

    operations = [
        migrations.AlterField(
            model_name="citation",
            name="chapter",
            field=models.ForeignKey(
                blank=True,
                db_index=False,
                null=True,
                on_delete=django.db.models.deletion.CASCADE,
                related_name="citations",
                to="summaries.chapter",
            ),
        ),
        migrations.AlterField(
            model_name="citation",
            name="confirmed_by",
            field=models.ForeignKey(
                blank=True,
                db_index=False,
                editable=False,
                null=True,
                on_delete=django.db.models.deletion.SET_NULL,
                related_name="+",
                to=settings.AUTH_USER_MODEL,
            ),
        ),
        migrations.AlterField(
            model_name="citation",
            name="key_point",
            field=models.ForeignKey(
                blank=True,
                db_index=False,
                null=True,
                on_delete=django.db.models.deletion.CASCADE,
                related_name="citations",
                to="summaries.keypoint",
            ),
        ),
        migrations.AlterField(
            model_name="citation",
            name="takeaway",
            field=models.ForeignKey(
                blank=True,
                db_index=False,
                null=True,
                on_delete=django.db.models.deletion.CASCADE,
                related_name="citations",
                to="summaries.takeaway",
            ),
        ),
        migrations.AddIndex(
            model_name="citation",
            index=models.Index(
                condition=models.Q(("chapter__isnull", False)),
                fields=["chapter"],
                name="citation_chapter",
            ),
        ),
        migrations.AddIndex(
            model_name="citation",
            index=models.Index(
                condition=models.Q(("key_point__isnull", False)),
                fields=["key_point"],
                name="citation_key_point",
            ),
        ),
        migrations.AddIndex(
            model_name="citation",
            index=models.Index(
                condition=models.Q(("takeaway__isnull", False)),
                fields=["takeaway"],
                name="citation_takeaway",
            ),
        ),
        migrations.AddIndex(
            model_name="citation",
            index=models.Index(
                condition=models.Q(("confirmed_by__isnull", False)),
                fields=["confirmed_by"],
                name="citation_confirmed_by",
            ),
        ),
    ]
